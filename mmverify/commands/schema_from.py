"""``mmverify schema-from EXAMPLE.json``: draft an artifact schema from an example.

The draft keeps the example's shape (types, required keys, list item shapes)
and puts an ``x-unit`` and an ``x-range`` placeholder on every number; it
copies no value of the example. The example is read like any artifact
(exact decimals, size and depth caps); exit 1 when it cannot be read.
"""
from __future__ import annotations

import sys

import click

from mmverify.cli import EXIT_OK, EXIT_VERDICT


@click.command("schema-from")
@click.argument("example", type=click.Path(dir_okay=False, exists=True))
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="write the draft here (default: standard output)")
@click.option("--title", default=None, help="the schema's title (default: a placeholder)")
def schema_from(example, output, title):
    """Draft an artifact schema from an example artifact (no value copied)."""
    from mmverify.reading.artifact import ArtifactError, parse_file
    from mmverify.tasks.scaffold import draft_schema, to_text

    try:
        data = parse_file(example).data
    except ArtifactError as exc:
        click.echo(f"error: {example}: {exc.message}", err=True)
        sys.exit(EXIT_VERDICT)
    text = to_text(draft_schema(data, title))
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        click.echo(text, nl=False)
    sys.exit(EXIT_OK)
