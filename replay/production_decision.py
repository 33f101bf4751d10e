"""Replay of CUMCM 2024 B (decisions in a production process): expected profit
per unit of the decisions an artifact hands in, for each situation of table 1.

The model, its witness, its rules and its rounding: `docs/replays.md`.
"""
from __future__ import annotations

import itertools
from functools import lru_cache
from decimal import ROUND_CEILING, ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction
from typing import Any, Mapping, Sequence

from .base import Derived

TASK_ID = "cumcm-2024-b-production-decision"

F = Fraction


def _pct(n: int) -> Fraction:
    return F(n, 100)


# table 1: (p1, buy1, test1, p2, buy2, test2, pf, assemble, testf, price, swap loss, dismantle)
CASES: dict[int, tuple[Fraction, ...]] = {
    1: (_pct(10), F(4), F(2), _pct(10), F(18), F(3), _pct(10), F(6), F(3), F(56), F(6), F(5)),
    2: (_pct(20), F(4), F(2), _pct(20), F(18), F(3), _pct(20), F(6), F(3), F(56), F(6), F(5)),
    3: (_pct(10), F(4), F(2), _pct(10), F(18), F(3), _pct(10), F(6), F(3), F(56), F(30), F(5)),
    4: (_pct(20), F(4), F(1), _pct(20), F(18), F(1), _pct(20), F(6), F(2), F(56), F(30), F(5)),
    5: (_pct(10), F(4), F(8), _pct(20), F(18), F(1), _pct(10), F(6), F(2), F(56), F(10), F(5)),
    6: (_pct(5), F(4), F(2), _pct(5), F(18), F(3), _pct(5), F(6), F(3), F(56), F(10), F(40)),
}
DECISIONS = ("inspect_part1", "inspect_part2", "inspect_final", "dismantle_bad_final")
ALL_DECISIONS = tuple(itertools.product((0, 1), repeat=4))
ROWS = 6                                  # table 1 has six situations
REFERENCE_SALVAGE_SHARE = F(38, 100)      # the reproduction's recovery share (Q2)
ZERO, ONE = F(0), F(1)

ROW_FIELDS = ("profit_reference", "profit_statement", "profit_low", "profit_high",
              "best_profit_reference", "best_profit_statement", "regret", "regret_statement")

# table 2 (Q3): parts (p, buy, test, semi-finished product), semi-finished (p, assemble, test, dismantle), final
Q3_PARTS = tuple((_pct(10), F(b), F(t), h) for b, t, h in
                 ((2, 1, 0), (8, 1, 0), (12, 2, 0), (2, 1, 1), (8, 1, 1), (12, 2, 1), (8, 1, 2), (12, 2, 2)))
Q3_HALVES = tuple((_pct(10), F(8), F(4), F(6)) for _ in range(3))
Q3_FINAL = dict(p=_pct(10), assemble=F(8), test=F(6), dismantle=F(10), price=F(200), swap=F(40))
Q3_HALF_SALVAGE_SHARE = F(1, 4)           # the reproduction's recovery shares (Q3)
Q3_FINAL_SALVAGE_SHARE = F(1, 5)
Q3_BITS = 16
PLACES = 9                                # derived values: decimals of the exact rational
_QUANTUM = Decimal(1).scaleb(-PLACES)
_CTX = Context(prec=60)

Q3_FIELDS = ("profit_reference", "profit_charged", "profit_charged_no_recovery", "profit_low", "profit_high")
DERIVED = (tuple(f"q2.row{i}.{f}" for i in range(ROWS) for f in ROW_FIELDS)
           + tuple(f"q3.{f}" for f in Q3_FIELDS))


TABLES_FILE = "statement_tables.json"
Tables = Mapping[int, Mapping[tuple[int, ...], tuple[Fraction, "Fraction | None"]]]


def load_official(data_dir: str) -> Tables:
    """The Q2 profit tables as :func:`statement_tables` computes them, read
    from ``data/statement_tables.json`` (``{"tables": {case: {"0101": [reference,
    statement or null]}}}``, values as ``p/q`` text)."""
    import json
    import os

    with open(os.path.join(data_dir, TABLES_FILE), encoding="utf-8") as fh:
        raw = json.load(fh)["tables"]
    tables = {int(c): {tuple(int(b) for b in d): (Fraction(r), None if st is None else Fraction(st))
                       for d, (r, st) in rows.items()} for c, rows in raw.items()}
    if set(tables) != set(CASES) or any(set(t) != set(ALL_DECISIONS) for t in tables.values()):
        raise ValueError(f"{TABLES_FILE}: expected {len(ALL_DECISIONS)} decision sets for each of cases "
                         f"{sorted(CASES)}")
    return tables


def tables_json(tables: Tables) -> dict:
    """The JSON document of :func:`load_official` for ``tables``."""
    def text(x: Fraction | None) -> str | None:
        return None if x is None else f"{x.numerator}/{x.denominator}"

    return {"description": "CUMCM 2024 B, Q2: expected profit per unit of each of the 16 decision sets in each "
                           "situation of table 1, [reference reading, statement reading (null: unbounded cost)], "
                           "exact; written by mmverify.replay.production_decision.statement_tables",
            "tables": {str(c): {"".join(map(str, d)): [text(r), text(st)] for d, (r, st) in sorted(t.items())}
                       for c, t in sorted(tables.items())}}


# --------------------------------------------------------------------------- reference model (B159)

def _part(p: Fraction, buy: Fraction, test: Fraction, inspect: int) -> tuple[Fraction, Fraction]:
    """The reproduction's part: (cost per part reaching assembly, defect probability)."""
    return ((buy + test) / (1 - p), ZERO) if inspect else (buy, p)


def reference_profit(case: int, decision: Sequence[int]) -> Fraction:
    """Expected profit per assembled product in the reproduction's model (exact)."""
    p1, b1, t1, p2, b2, t2, pf, a, tf, price, swap, dis = CASES[case]
    i1, i2, fin, dm = decision
    c1, d1 = _part(p1, b1, t1, i1)
    c2, d2 = _part(p2, b2, t2, i2)
    good = (1 - d1) * (1 - d2) * (1 - pf)
    base = c1 + c2 + a
    if fin:
        salvage = dm * max(ZERO, REFERENCE_SALVAGE_SHARE * ((1 - d1) * b1 + (1 - d2) * b2) - dis)
        return good * price - base - tf + (1 - good) * salvage
    return price - base - (1 - good) * swap


# --------------------------------------------------------------------------- statement model

FRESH = "fresh"


def _draw(p: Fraction, buy: Fraction, test: Fraction, inspect: int, state: str | bool) -> list[tuple[Fraction, Fraction, bool]]:
    """Steps (1) for one part: [(probability, cost, part is good)], from a fresh
    purchase (``state`` = FRESH) or a recovered part of known hidden state."""
    good_new = (buy + test) / (1 - p)          # inspect, discard, buy again: cost per good part
    if state == FRESH:
        return [(ONE, good_new, True)] if inspect else [(1 - p, buy, True), (p, buy, False)]
    if not inspect:
        return [(ONE, ZERO, bool(state))]
    return [(ONE, test, True)] if state else [(ONE, test + good_new, True)]


def _transitions(case: int, decision: Sequence[int], state) -> tuple[Fraction, dict[Any, Fraction]]:
    """From an input state (FRESH or a recovered pair (s1, s2)): the expected cost
    of one attempt and the probabilities of the next input states (None = the
    customer holds a good product)."""
    p1, b1, t1, p2, b2, t2, pf, a, tf, price, swap, dis = CASES[case]
    i1, i2, fin, dm = decision
    s1, s2 = (FRESH, FRESH) if state == FRESH else state
    cost, nxt = ZERO, {}
    for (q1, c1, g1), (q2, c2, g2) in itertools.product(_draw(p1, b1, t1, i1, s1), _draw(p2, b2, t2, i2, s2)):
        q = q1 * q2
        cost += q * (c1 + c2 + a + (tf if fin else ZERO))
        ok = (1 - pf) if g1 and g2 else ZERO
        bad = 1 - ok
        nxt[None] = nxt.get(None, ZERO) + q * ok
        if bad:
            cost += q * bad * ((ZERO if fin else swap) + (dis if dm else ZERO))
            after = (g1, g2) if dm else FRESH
            nxt[after] = nxt.get(after, ZERO) + q * bad
    return cost, nxt


def _solve(matrix: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction] | None:
    """Exact Gauss-Jordan elimination; None when singular."""
    n = len(rhs)
    m = [row[:] + [r] for row, r in zip(matrix, rhs)]
    for col in range(n):
        piv = next((r for r in range(col, n) if m[r][col] != 0), None)
        if piv is None:
            return None
        m[col], m[piv] = m[piv], m[col]
        inv = 1 / m[col][col]
        m[col] = [x * inv for x in m[col]]
        for r in range(n):
            if r != col and m[r][col] != 0:
                f = m[r][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[r][n] for r in range(n)]


def statement_profit(case: int, decision: Sequence[int]) -> Fraction | None:
    """Expected profit per customer in the statement's process (exact), or None
    when the expected cost is unbounded (a defective part recycled forever)."""
    price = CASES[case][9]
    states, edges, seen, todo = [], {}, {FRESH}, [FRESH]
    while todo:                                   # at most 5 states: FRESH and 4 recovered pairs
        s = todo.pop()
        states.append(s)
        edges[s] = _transitions(case, decision, s)
        for t, q in edges[s][1].items():
            if t is not None and q and t not in seen:
                seen.add(t)
                todo.append(t)
    # every state must reach delivery with positive probability, else the cost is unbounded
    ends = {s for s in states if edges[s][1].get(None, ZERO) > 0}
    grew = True
    while grew:
        grew = False
        for s in states:
            if s not in ends and any(q and t in ends for t, q in edges[s][1].items() if t is not None):
                ends.add(s)
                grew = True
    if len(ends) != len(states):
        return None
    index = {s: k for k, s in enumerate(states)}
    n = len(states)
    matrix = [[ZERO] * n for _ in range(n)]
    rhs = [ZERO] * n
    for s in states:
        k = index[s]
        matrix[k][k] += ONE
        cost, nxt = edges[s]
        rhs[k] = cost
        for t, q in nxt.items():
            if t is not None:
                matrix[k][index[t]] -= q
    values = _solve(matrix, rhs)
    if values is None:                            # unreachable: every state reaches delivery
        return None
    return price - values[index[FRESH]]


def case_table(case: int) -> dict[tuple[int, ...], tuple[Fraction, Fraction | None]]:
    """Both readings' profit for all 16 decision sets of one situation."""
    return {d: (reference_profit(case, d), statement_profit(case, d)) for d in ALL_DECISIONS}


@lru_cache(maxsize=1)
def statement_tables() -> Tables:
    """The 6 x 16 exact profits of Q2, fixed by the statement (about 25 ms)."""
    return {c: case_table(c) for c in CASES}


def best_profits(table: Mapping[tuple[int, ...], tuple[Fraction, Fraction | None]]) -> tuple[Fraction, Fraction]:
    """The best profit of one situation's table in each reading (finite values only)."""
    return (max(r for r, _ in table.values()), max(s for _, s in table.values() if s is not None))


# --------------------------------------------------------------------------- Q3 reference model

def q3_reference(bits: Sequence[int]) -> Fraction:
    """The reproduction's Q3 expected profit (its ``evaluate_q3``, exactly).

    Bits: inspect parts 1-8, inspect semi-finished 1-3, dismantle semi-finished
    1-3, inspect final, dismantle final. Part costs as in Q2; a semi-finished
    product is good with probability prod(parts good) x 0.9, costs assembly plus
    inspection, and is credited (1 - g) x dismantle-flag x max(0, 1/4 x its parts'
    purchase price - 6); an inspected one then counts as good with no further
    cost. The final product: good with probability prod(semi good) x 0.9; cost 8
    (+ 6 if inspected); inspected: g x 200 - cost + (1 - g) x flag x max(0, 1/5 x
    64 - 10); otherwise 200 - cost - (1 - g) x 40."""
    part_cost, part_good = [], []
    for (p, buy, test, _), b in zip(Q3_PARTS, bits[:8]):
        c, d = _part(p, buy, test, b)
        part_cost.append(c)
        part_good.append(1 - d)
    total = sum(part_cost, ZERO)
    halves_good = []
    for h, (p, assemble, test, dis) in enumerate(Q3_HALVES):
        members = [k for k, part in enumerate(Q3_PARTS) if part[3] == h]
        g = ONE
        for k in members:
            g *= part_good[k]
        g *= 1 - p
        cost = assemble + bits[8 + h] * test
        salvage = bits[11 + h] * max(ZERO, Q3_HALF_SALVAGE_SHARE * sum(Q3_PARTS[k][1] for k in members) - dis)
        total += cost - (1 - g) * salvage
        halves_good.append(ONE if bits[8 + h] else g)
    good = (1 - Q3_FINAL["p"])
    for g in halves_good:
        good *= g
    total += Q3_FINAL["assemble"] + bits[14] * Q3_FINAL["test"]
    if bits[14]:
        salvage = bits[15] * max(ZERO, Q3_FINAL_SALVAGE_SHARE * sum(p[1] for p in Q3_PARTS) - Q3_FINAL["dismantle"])
        return good * Q3_FINAL["price"] - total + (1 - good) * salvage
    return Q3_FINAL["price"] - total - (1 - good) * Q3_FINAL["swap"]


def q3_charged(bits: Sequence[int], recovery: bool = True) -> Fraction:
    """Q3 expected profit per assembled final product in the reproduction's
    2-stage model with every rejected semi-finished product charged (exact).

    The model of :func:`q3_reference` (part costs as in Q2, recovery shares 1/4
    and 1/5 of the parts' purchase price, a final product sold or, if inspected,
    sold when good), but a semi-finished product that is inspected is made again
    until one passes: per good one, 1/g attempts, each paying its parts, its
    assembly and its inspection, and each of the 1/g - 1 rejected ones credited
    its recovery value when dismantled.  An uninspected semi-finished product
    goes to final assembly as it is (no defect is found, so none is dismantled).
    ``recovery=False`` credits no recovery value at all (dismantled parts worth
    no more than the dismantling costs): the statement fixes no value for them,
    so the replay brackets the claim between the two."""
    part_cost, part_good = [], []
    for (p, buy, test, _), b in zip(Q3_PARTS, bits[:8]):
        c, d = _part(p, buy, test, b)
        part_cost.append(c)
        part_good.append(1 - d)
    total = ZERO
    halves_good = []
    for h, (p, assemble, test, dis) in enumerate(Q3_HALVES):
        members = [k for k, part in enumerate(Q3_PARTS) if part[3] == h]
        g = 1 - p
        for k in members:
            g *= part_good[k]
        attempt = sum((part_cost[k] for k in members), ZERO) + assemble
        if bits[8 + h]:
            value = max(ZERO, Q3_HALF_SALVAGE_SHARE * sum(Q3_PARTS[k][1] for k in members) - dis)
            credit = value if (recovery and bits[11 + h]) else ZERO
            total += (attempt + test - (1 - g) * credit) / g
            halves_good.append(ONE)
        else:
            total += attempt
            halves_good.append(g)
    good = 1 - Q3_FINAL["p"]
    for g in halves_good:
        good *= g
    total += Q3_FINAL["assemble"] + bits[14] * Q3_FINAL["test"]
    if bits[14]:
        value = max(ZERO, Q3_FINAL_SALVAGE_SHARE * sum(p[1] for p in Q3_PARTS) - Q3_FINAL["dismantle"])
        credit = value if (recovery and bits[15]) else ZERO
        return good * Q3_FINAL["price"] - total + (1 - good) * credit
    return Q3_FINAL["price"] - total - (1 - good) * Q3_FINAL["swap"]


def decimal_value(x: Fraction, rounding: str = ROUND_HALF_EVEN) -> Fraction:
    """``x`` rounded to ``PLACES`` decimals, as an exact Fraction (decimal values
    scale to integers, so the Lean obligations can compare them)."""
    q = _CTX.divide(Decimal(x.numerator), Decimal(x.denominator))
    return Fraction(q.quantize(_QUANTUM, rounding=rounding, context=_CTX))


# --------------------------------------------------------------------------- witness

class _Gap(Exception):
    pass


def _is_number(v: Any) -> bool:
    return not isinstance(v, bool) and (isinstance(v, int) or (isinstance(v, Decimal) and v.is_finite()))


def _flag(row: Mapping[str, Any], key: str, where: str) -> int:
    v = row.get(key)
    if v is None:
        raise _Gap(f"witness absent: {where}.{key}")
    if not _is_number(v):
        raise _Gap(f"witness malformed: {where}.{key} is not a number")
    if v not in (0, 1):
        raise _Gap(f"witness malformed: {where}.{key} is not 0 or 1")
    return int(v)


def _case(row: Mapping[str, Any], where: str) -> int:
    v = row.get("case")
    if v is None:
        raise _Gap(f"witness absent: {where}.case")
    if not _is_number(v):
        raise _Gap(f"witness malformed: {where}.case is not a number")
    if v not in CASES:                    # Decimal('1') == 1 hashes alike; Decimal('1.5') is not a key
        raise _Gap(f"witness malformed: {where}.case is not a situation of table 1 (1-6)")
    return int(v)


def _row(rows: Any, i: int) -> tuple[int, tuple[int, ...]]:
    where = f"experiment_result.q2.best_decisions[{i}]"
    if not isinstance(rows, list):
        raise _Gap("witness malformed: experiment_result.q2.best_decisions is not a list")
    if i >= len(rows):
        raise _Gap(f"witness absent: {where}")
    row = rows[i]
    if not isinstance(row, dict):
        raise _Gap(f"witness malformed: {where} is not an object")
    return _case(row, where), tuple(_flag(row, k, where) for k in DECISIONS)


def _section(data: Mapping[str, Any], q: str, key: str) -> Any:
    exp = data.get("experiment_result")
    if not isinstance(exp, dict):
        raise _Gap("witness absent: experiment_result")
    sec = exp.get(q)
    if not isinstance(sec, dict) or key not in sec:
        raise _Gap(f"witness absent: experiment_result.{q}.{key}")
    return sec[key]


def _q2(data: Mapping[str, Any], i: int, tables: Tables) -> dict[str, Fraction]:
    case, decision = _row(_section(data, "q2", "best_decisions"), i)
    ref, stmt = tables[case][decision]
    best_ref, best_stmt = best_profits(tables[case])
    out = {"profit_reference": ref, "best_profit_reference": best_ref, "best_profit_statement": best_stmt}
    regret = best_ref - ref
    if stmt is not None:
        out.update(profit_statement=stmt, profit_low=min(ref, stmt), profit_high=max(ref, stmt),
                   regret_statement=best_stmt - stmt)
        regret = min(regret, best_stmt - stmt)
    else:                                         # the literal reading's cost is unbounded: the reference decides
        out.update(profit_low=ref, profit_high=ref)
    out["regret"] = regret
    return out


def _q3(data: Mapping[str, Any]) -> dict[str, Fraction]:
    bits = _section(data, "q3", "decision_bits")
    where = "experiment_result.q3.decision_bits"
    if not isinstance(bits, list):
        raise _Gap(f"witness malformed: {where} is not a list")
    if len(bits) != Q3_BITS:
        raise _Gap(f"witness malformed: {where} holds {len(bits)} flags, the layout has {Q3_BITS}")
    flags = []
    for k, v in enumerate(bits):
        if not _is_number(v) or v not in (0, 1):
            raise _Gap(f"witness malformed: {where}[{k}] is not 0 or 1")
        flags.append(int(v))
    charged, bare = q3_charged(flags, True), q3_charged(flags, False)
    return {"profit_reference": q3_reference(flags), "profit_charged": charged,
            "profit_charged_no_recovery": bare, "profit_low": min(charged, bare), "profit_high": max(charged, bare)}


def replay(data: Mapping[str, Any], official: Tables | None = None) -> Derived:
    """The derived values of an artifact's witness; ``official`` is the stored
    Q2 tables (None: computed here)."""
    tables = official if official is not None else statement_tables()
    values: dict[str, Fraction] = {}
    gaps: dict[str, str] = {}
    for i in range(ROWS):
        names = {f: f"q2.row{i}.{f}" for f in ROW_FIELDS}
        try:
            got = _q2(data, i, tables)
        except _Gap as why:
            gaps.update({n: str(why) for n in names.values()})
            continue
        for f, n in names.items():
            if f in got:
                # regrets round up: a decision set short of the best never rounds to regret 0
                values[n] = decimal_value(got[f], ROUND_CEILING if f.startswith("regret") else ROUND_HALF_EVEN)
            else:
                gaps[n] = ("statement reading unbounded: the plan dismantles defective products but leaves a "
                           "part uninspected, so a defective part of that kind returns to assembly forever")
    try:
        values.update({f"q3.{f}": decimal_value(v) for f, v in _q3(data).items()})
    except _Gap as why:
        gaps.update({f"q3.{f}": str(why) for f in Q3_FIELDS})
    return Derived(values=values, gaps=gaps)
