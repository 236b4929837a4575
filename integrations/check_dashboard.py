#!/usr/bin/env python3
"""Check the Grafana dashboard against a live server, and META.json against the control file.

    check_dashboard.py dashboard FILE.json --psql 'psql -X -h HOST -p PORT -d DB'
                       [--from ISO] [--to ISO] [--interval 1m] [--var name=value ...]
                       [--each-value]
    check_dashboard.py meta META.json pg_storage_wait.control

`dashboard` checks the JSON model (schemaVersion >= 38, unique panel ids, the PostgreSQL data
source as a template variable used by every target), then expands every target's rawSql the way
Grafana's PostgreSQL data source does ($__timeFilter(col) -> col BETWEEN 'from' AND 'to',
$__timeFrom(), $__timeTo(), $__time(col), $__timeEpoch(col), $__unixEpochFilter(col),
$__interval, $__interval_ms, template variables as $name, ${name} and [[name]]), runs it with
psql (any error fails), and checks the result: at least one row; a time_series target has a
timestamptz "time" column and numeric value columns; every column the panel maps (field
overrides by name, reduceOptions.fields, xField) exists. --each-value also runs every panel once
per option of each custom variable; --allow-empty FUNCTION lets panels calling it return no
rows (a machine without block devices); --expect-nonnull COLUMN fails when that column of a table
panel is NULL in every row (e.g. query: the text joined from pg_stat_statements). Python 3 standard library only.

`meta` checks that META.json (PGXN meta spec 1.0.0) carries the control file's default_version.
Exit status 0 when everything passes, 1 otherwise (each failure printed).
"""
import argparse
import datetime as dt
import json
import re
import shlex
import subprocess
import sys

NUMERIC = {"smallint", "integer", "bigint", "real", "double precision", "numeric"}
FAILURES = []
EXPECT_NONNULL = []
ALLOW_EMPTY = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL: " + msg)


def rfc3339(t):
    # Grafana formats the range with Go's time.RFC3339Nano in UTC.
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def interval_ms(text):
    m = re.fullmatch(r"(\d+)(ms|s|m|h|d|w|y)", text)
    if not m:
        raise SystemExit("--interval must look like Grafana's $__interval (500ms, 10s, 1m, 1h, 1d)")
    mult = {"ms": 1, "s": 1000, "m": 60000, "h": 3600000, "d": 86400000, "w": 604800000,
            "y": 31536000000}
    return int(m.group(1)) * mult[m.group(2)]


def expand(sql, t_from, t_to, interval, variables):
    """Grafana's PostgreSQL macro engine (pkg/tsdb/grafana-postgresql-datasource/macros.go)
    plus the template and global variables Grafana interpolates before it."""
    f, t = rfc3339(t_from), rfc3339(t_to)
    macros = {
        "__timeFilter": lambda c: f"{c} BETWEEN '{f}' AND '{t}'",
        "__time": lambda c: f'{c} AS "time"',
        "__timeEpoch": lambda c: f'extract(epoch from {c}) AS "time"',
        "__unixEpochFilter": lambda c: (f"{c} >= {int(t_from.timestamp())} AND "
                                        f"{c} <= {int(t_to.timestamp())}"),
        "__timeFrom": lambda c: f"'{f}'",
        "__timeTo": lambda c: f"'{t}'",
    }

    def macro(m):
        name, arg = m.group(1), m.group(2).strip()
        if name not in macros:
            fail(f"unknown macro ${name}() in: {sql}")
            return m.group(0)
        return macros[name](arg)

    out = re.sub(r"\$(__\w+)\(([^)]*)\)", macro, sql)
    glob = {"__interval_ms": str(interval_ms(interval)), "__interval": interval}
    glob.update(variables)
    # Longest names first so that $__interval_ms is not read as $__interval + "_ms".
    for name in sorted(glob, key=len, reverse=True):
        v = glob[name]
        out = out.replace("${" + name + "}", v).replace("[[" + name + "]]", v)
        out = re.sub(r"\$" + re.escape(name) + r"\b", lambda _m, v=v: v, out)
    left = re.findall(r"\$\{?\w+|\[\[\w+\]\]", out)
    if left:
        fail(f"unexpanded variables {left} in: {out}")
    return out


def run_psql(psql, script):
    p = subprocess.run(shlex.split(psql) + ["-X", "-q", "--csv", "-v", "ON_ERROR_STOP=1"],
                       input=script, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def parse_csv(text):
    import csv
    import io
    return list(csv.reader(io.StringIO(text)))


def describe(psql, sql):
    rc, out, err = run_psql(psql, sql + "\n\\gdesc\n")
    if rc != 0:
        return None, err.strip()
    rows = parse_csv(out)
    return [(r[0], r[1]) for r in rows[1:]], None


def execute(psql, sql):
    rc, out, err = run_psql(psql, sql + "\n;\n")
    if rc != 0:
        return None, err.strip()
    rows = parse_csv(out)
    return rows, None


def mapped_columns(panel):
    """Columns the panel maps by name, and the regexes that must match a column."""
    names, regexes = set(), []
    fc = panel.get("fieldConfig", {})
    for o in fc.get("overrides", []):
        m = o.get("matcher", {})
        if m.get("id") == "byName":
            names.add(m["options"])
    opts = panel.get("options", {})
    if opts.get("xField"):
        names.add(opts["xField"])
    fields = opts.get("reduceOptions", {}).get("fields", "")
    if fields:
        if fields.startswith("/") and fields.endswith("/"):
            regexes.append(fields[1:-1])
        else:
            names.add(fields)
    return names, regexes


def check_target(panel, target, psql, t_from, t_to, interval, variables, label):
    where = f"panel {panel['id']} '{panel['title']}'{label}"
    sql = expand(target["rawSql"], t_from, t_to, interval, variables)
    cols, err = describe(psql, sql)
    if err:
        fail(f"{where}: {err}\n    SQL: {sql}")
        return
    rows, err = execute(psql, sql)
    if err:
        fail(f"{where}: {err}\n    SQL: {sql}")
        return
    names = [c for c, _ in cols]
    for c, want in EXPECT_NONNULL:
        if c in names and target.get("format") == "table":
            i = names.index(c)
            if not any(r[i] for r in rows[1:]):
                fail(f"{where}: column {c} is empty in every row ({want})")
    types = dict(cols)
    nrows = len(rows) - 1
    if nrows < 1 and any(f in sql for f in ALLOW_EMPTY):
        print(f"ok   {where}: no rows (allowed: --allow-empty), columns {', '.join(names)}")
    elif nrows < 1:
        fail(f"{where}: no rows (a loaded server must give at least one)\n    SQL: {sql}")
    if target.get("format") == "time_series":
        if types.get("time") != "timestamp with time zone":
            fail(f"{where}: time_series needs a timestamptz column named time, has {cols}")
        values = [c for c in names if c != "time"]
        if not values:
            fail(f"{where}: time_series has no value column")
        for c in values:
            if types[c] not in NUMERIC:
                fail(f"{where}: value column {c} is {types[c]}, not numeric")
    want, regexes = mapped_columns(panel)
    for c in sorted(want - set(names)):
        fail(f"{where}: the panel maps column '{c}' but the query returns {names}")
    for rx in regexes:
        hits = [c for c in names if re.search(rx, c)]
        if not hits:
            fail(f"{where}: reduceOptions.fields /{rx}/ matches none of {names}")
        elif panel["type"] in ("gauge", "bargauge"):
            for c in hits:
                if types[c] not in NUMERIC:
                    fail(f"{where}: gauge field {c} is {types[c]}, not numeric")
    print(f"ok   {where}: {nrows} row(s), columns {', '.join(names)}")


def check_model(d):
    if d.get("schemaVersion", 0) < 38:
        fail(f"schemaVersion {d.get('schemaVersion')} < 38")
    ids = []

    def walk(panels):
        for p in panels:
            ids.append(p.get("id"))
            walk(p.get("panels", []))
    walk(d.get("panels", []))
    dup = sorted({i for i in ids if ids.count(i) > 1 or i is None}, key=str)
    if dup:
        fail(f"panel ids not unique or missing: {dup}")
    dsvars = [v for v in d.get("templating", {}).get("list", []) if v.get("type") == "datasource"]
    if not dsvars or "postgres" not in dsvars[0].get("query", ""):
        fail("no PostgreSQL data source template variable")
        return None
    return dsvars[0]["name"]


def dashboard(args):
    d = json.load(open(args.file))
    dsvar = check_model(d)
    now = dt.datetime.now(dt.timezone.utc)
    t_to = dt.datetime.fromisoformat(args.to) if args.to else now
    t_from = dt.datetime.fromisoformat(args.from_) if args.from_ else t_to - dt.timedelta(hours=1)
    customs = {v["name"]: v for v in d["templating"]["list"] if v.get("type") == "custom"}
    variables = {n: v["current"]["value"] for n, v in customs.items()}
    for kv in args.var:
        n, _, v = kv.partition("=")
        variables[n] = v
    if dsvar:
        variables[dsvar] = "datasource"
    # Query variables: run their query as Grafana does on load, take the first value. Grafana's
    # PostgreSQL data source interpolates a single-valued variable with ' doubled.
    for v in d["templating"]["list"]:
        if v.get("type") != "query":
            continue
        rows, err = execute(args.psql, expand(v["query"], t_from, t_to, args.interval, variables))
        if err or len(rows) < 2:
            fail(f"variable {v['name']}: {err or 'no value'}")
            continue
        variables[v["name"]] = rows[1][0].replace("'", "''")
        print(f"ok   variable {v['name']} = {variables[v['name']]}")
    runs = [("", variables)]
    if args.each_value:
        for n, v in customs.items():
            for o in v["options"]:
                if o["value"] != variables[n]:
                    runs.append((f" [{n}={o['value']}]", dict(variables, **{n: o["value"]})))
    panels = [p for p in d["panels"] if p["type"] != "row"]
    for p in panels:
        targets = p.get("targets", [])
        if not targets:
            fail(f"panel {p['id']} '{p['title']}' has no query")
        for t in targets:
            if dsvar and t.get("datasource", {}).get("uid") != "${" + dsvar + "}":
                fail(f"panel {p['id']}: target data source is not ${{{dsvar}}}")
            if not t.get("rawSql"):
                fail(f"panel {p['id']}: target without rawSql")
                continue
            for label, vs in runs:
                if label and not any(("$" + n) in t["rawSql"] for n in customs):
                    continue
                check_target(p, t, args.psql, t_from, t_to, args.interval, vs, label)
    print(f"{len(panels)} panels, {len(FAILURES)} failure(s)")


def meta(args):
    m = json.load(open(args.meta))
    control = open(args.control).read()
    cv = re.search(r"^\s*default_version\s*=\s*'([^']+)'", control, re.M)
    if not cv:
        fail(f"no default_version in {args.control}")
        return
    v = cv.group(1)
    if m.get("meta-spec", {}).get("version") != "1.0.0":
        fail("META.json meta-spec version is not 1.0.0")
    for k in ("name", "abstract", "version", "maintainer", "license", "provides", "meta-spec"):
        if k not in m:
            fail(f"META.json lacks required key {k}")

    # PGXN versions are semantic versions: control 1.1 is 1.1.0.
    def sem(x):
        return x if x.count(".") == 2 else x + ".0"
    if m.get("version") != sem(v):
        fail(f"META.json version {m.get('version')} != control default_version {v} ({sem(v)})")
    ext = m.get("provides", {}).get("pg_storage_wait", {})
    if ext.get("version") != sem(v):
        fail(f"META.json provides.pg_storage_wait.version {ext.get('version')} != {sem(v)}")
    if not FAILURES:
        print(f"ok   META.json version {m['version']} matches default_version {v}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("dashboard")
    a.add_argument("file")
    a.add_argument("--psql", required=True, help="psql command line (connection options)")
    a.add_argument("--from", dest="from_")
    a.add_argument("--to")
    a.add_argument("--interval", default="1m")
    a.add_argument("--var", action="append", default=[])
    a.add_argument("--each-value", action="store_true")
    a.add_argument("--allow-empty", action="append", default=[], metavar="FUNCTION",
                   help="a panel whose SQL calls FUNCTION may return no rows (columns still checked)")
    a.add_argument("--expect-nonnull", action="append", default=[], metavar="COLUMN",
                   help="fail when this column is NULL in every row of a table panel returning it")
    b = sub.add_parser("meta")
    b.add_argument("meta")
    b.add_argument("control")
    args = ap.parse_args()
    ALLOW_EMPTY.extend(getattr(args, "allow_empty", []))
    EXPECT_NONNULL.extend((c, "--expect-nonnull") for c in getattr(args, "expect_nonnull", []))
    (dashboard if args.cmd == "dashboard" else meta)(args)
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
