"""Data tooling: convert the CUMCM 2023 C attachments into the replay's data files.

    python benchmarks/convert_vegetable_data.py DIR [--out anchors/cumcm-2023-c-vegetable-pricing/data]

DIR holds the contest's ``附件1.xlsx`` (items and categories), ``附件3.xlsx``
(daily wholesale prices) and ``附件4.xlsx`` (loss rates). Needs ``openpyxl``
(a one-off conversion dependency, not a runtime one). The output is
deterministic: rows in the workbook's order, numbers written as the shortest
decimal that reads back as the cell's stored double, ``\\n`` line ends, and the
gzip stream written with a fixed modification time (0) and no file name, so the
same workbooks give byte-identical files. Prints the sha256 of every input and
output and the checks of PROVENANCE.md.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import gzip
import hashlib
import io
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, os.pardir, "anchors", "cumcm-2023-c-vegetable-pricing", "data")

HEAD_1 = ("单品编码", "单品名称", "分类编码", "分类名称")
HEAD_3 = ("日期", "单品编码", "批发价格(元/千克)")
HEAD_4_ITEMS = ("单品编码", "单品名称", "损耗率(%)")
HEAD_4_CATEGORIES = ("小分类编码", "小分类名称", "平均损耗率(%)_小分类编码_不同值")


def number(v) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"not a number: {v!r}")
    text = repr(float(v))
    return text[:-2] if text.endswith(".0") else text


def code(v) -> str:
    text = str(v).strip()
    if not text.isdigit():
        raise ValueError(f"not a code: {v!r}")
    return text


def sheet_rows(path: str, index: int, head: tuple[str, ...]) -> list[tuple]:
    import openpyxl

    wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    rows = [tuple(r) for r in wb.worksheets[index].iter_rows(values_only=True)]
    wb.close()
    if tuple(str(c).strip() for c in rows[0][:len(head)]) != head:
        raise ValueError(f"{os.path.basename(path)} sheet {index}: header {rows[0]!r}, expected {head!r}")
    return [r[:len(head)] for r in rows[1:] if any(c is not None for c in r)]


def csv_bytes(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode("utf-8")


def gz(data: bytes) -> bytes:
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as fh:
        fh.write(data)
    return out.getvalue()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def convert(src: str) -> dict[str, bytes]:
    a1, a3, a4 = (os.path.join(src, f"附件{i}.xlsx") for i in (1, 3, 4))
    items = [(code(c), str(n).strip(), code(cc), str(cn).strip()) for c, n, cc, cn in sheet_rows(a1, 0, HEAD_1)]
    prices = []
    for d, c, p in sheet_rows(a3, 0, HEAD_3):
        if not isinstance(d, dt.datetime) or d.time() != dt.time(0):
            raise ValueError(f"attachment 3: not a date: {d!r}")
        prices.append((d.date().isoformat(), code(c), number(p)))
    cat_loss = [(code(c), str(n).strip(), number(r)) for c, n, r in sheet_rows(a4, 0, HEAD_4_CATEGORIES)]
    item_loss = [(code(c), str(n).strip(), number(r)) for c, n, r in sheet_rows(a4, 1, HEAD_4_ITEMS)]
    return {
        "items.csv": csv_bytes(("item_code", "item_name", "category_code", "category_name"), items),
        "wholesale_prices.csv.gz": gz(csv_bytes(("date", "item_code", "wholesale_yuan_per_kg"), prices)),
        "item_loss_rates.csv": csv_bytes(("item_code", "item_name", "loss_rate_pct"), item_loss),
        "category_loss_rates.csv": csv_bytes(("category_code", "category_name", "loss_rate_pct"), cat_loss),
    }


def checks(files: dict[str, bytes]) -> list[str]:
    """The checks PROVENANCE.md records; raises on a failed one."""
    def rows(name):
        data = files[name]
        if name.endswith(".gz"):
            data = gzip.decompress(data)
        return list(csv.DictReader(io.StringIO(data.decode("utf-8"))))

    items, prices = rows("items.csv"), rows("wholesale_prices.csv.gz")
    item_loss, cat_loss = rows("item_loss_rates.csv"), rows("category_loss_rates.csv")
    codes = {r["item_code"] for r in items}
    cats = {r["category_code"]: r["category_name"] for r in items}
    by_cat = {}
    for r in items:
        by_cat[r["category_name"]] = by_cat.get(r["category_name"], 0) + 1
    out = []

    def check(ok: bool, text: str) -> None:
        if not ok:
            raise SystemExit(f"check failed: {text}")
        out.append(text)

    check(len(items) == 251 == len(codes), "attachment 1: 251 items, codes distinct")
    check(len(cats) == 6, f"attachment 1: 6 categories ({', '.join(f'{k} {v}' for k, v in sorted(by_cat.items()))})")
    check(max(by_cat, key=by_cat.get) == "花叶类", "花叶类 is the largest category by item count")
    dates = sorted({r["date"] for r in prices})
    check(dates[0] == "2020-07-01" and dates[-1] == "2023-06-30",
          f"attachment 3: {len(prices)} rows, {len(dates)} dates from {dates[0]} to {dates[-1]}")
    check({r["item_code"] for r in prices} == codes, "attachment 3 quotes every item of attachment 1, and no other")
    check(len({(r["date"], r["item_code"]) for r in prices}) == len(prices), "attachment 3: one quote per item and date")
    check(all(float(r["wholesale_yuan_per_kg"]) > 0 for r in prices), "attachment 3: every price > 0")
    check({r["item_code"] for r in item_loss} == codes and len(item_loss) == 251,
          "attachment 4 (items): one loss rate for each item of attachment 1")
    check({(r["category_code"], r["category_name"]) for r in cat_loss} == set(cats.items()),
          "attachment 4 (categories): one loss rate for each category of attachment 1, codes and names agree")
    window = {r["item_code"] for r in prices if "2023-06-24" <= r["date"] <= "2023-06-30"}
    last = {r["item_code"] for r in prices if r["date"] == "2023-06-30"}
    out.append(f"items quoted in 2023-06-24..06-30: {len(window)}; on 2023-06-30: {len(last)}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    for i in (1, 3, 4):
        with open(os.path.join(args.src, f"附件{i}.xlsx"), "rb") as fh:
            print(f"附件{i}.xlsx  sha256 {sha(fh.read())}")
    files = convert(args.src)
    for line in checks(files):
        print("check:", line)
    os.makedirs(args.out, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(args.out, name), "wb") as fh:
            fh.write(data)
        print(f"{name}  {len(data)} bytes  sha256 {sha(data)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
