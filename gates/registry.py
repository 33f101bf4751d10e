"""The gate form registry, at the bottom of the gates package: the form names,
the :class:`Form` record and :data:`FORM_TABLE`, the table every module that
treats forms differently dispatches through.

It imports no implementation: :mod:`.formtable` writes one row per form into
the table when :mod:`mmverify.gates` is imported (the package imports it), and
the implementations (:mod:`.compile`, :mod:`.forms`, :mod:`.quick`,
:mod:`.quickcode`, :mod:`.model`) read the rows when they run.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable, Literal, get_args

if TYPE_CHECKING:
    from .model import Gate, GateInstance

# the form names, in table order (a test keeps them equal to the table's keys
# and to the task schema's enum)
FormName = Literal["range", "integer", "order", "identity", "finite_domain", "partition_sum"]
FORMS: tuple[FormName, ...] = get_args(FormName)


@dataclass(frozen=True)
class Form:
    """One gate form (see :mod:`.formtable` for who calls which field)."""

    name: FormName
    keys: frozenset[str]
    compile: Callable[..., Gate]
    decide: Callable[..., GateInstance]
    bounds: Callable[[GateInstance], dict[str, Any]]
    claim: Callable[[GateInstance, Fraction], tuple]
    bounds_field: Callable[[Gate, list[int], bool], bool]
    verdict: Callable[..., tuple[str, str | None]]
    expand: Callable[..., list[GateInstance] | None] | None = None
    quick: Callable[[Gate], Any] | None = None
    reads_labels: bool = False


# form name -> its row; filled once by mmverify.gates.formtable
FORM_TABLE: dict[FormName, Form] = {}
