#!/usr/bin/env python3
"""A flame graph (SVG) of a JFR recording's CPU samples, with the JDK's own `jfr` tool.

Usage:
  python3 bench/jfr-flame.py RECORDING.jfr OUT.svg [--through dev.idempotency] [--title T] \
      [--pass-through dev.idempotency.web.IdempotencyFilter.doFilterInternal] [--not dev.idempotency.sample] [--trim]

--through keeps only the samples whose stack passes through a frame whose class name
starts with that prefix (dots or slashes), so the graph shows where the starter's own
path spends its CPU; the title says how many samples that is of all. --pass-through names
frames that only hand the call on (the filter around the whole request) and do not count,
--not packages under the prefix that are not the starter's (the application's own); --trim
cuts each kept stack below its first counted frame, so the starter's parts are the roots.
Frames are drawn root at the bottom, width proportional to samples, one colour per
top-level package.
"""

import argparse
import collections
import html
import json
import subprocess
import sys

WIDTH = 1200
ROW = 16
MIN_WIDTH = 3  # px: narrower frames (under 1/400 of the samples drawn) are left out, which keeps the file small


def stacks(recording, through, pass_through=(), trim=False, others=()):
    out = subprocess.run(["jfr", "print", "--json", "--events", "jdk.ExecutionSample", "--stack-depth", "256",
                          recording], check=True, capture_output=True, text=True).stdout
    events = json.loads(out)["recording"]["events"]
    prefix = through.replace(".", "/") if through else None
    kept, total = collections.Counter(), 0
    for event in events:
        trace = event["values"].get("stackTrace")
        if not trace:
            continue
        frames = [f["method"]["type"]["name"].replace(".", "/") + "." + f["method"]["name"] for f in trace["frames"]]
        total += 1
        frames.reverse()  # root first
        if prefix:
            hits = [i for i, f in enumerate(frames) if f.startswith(prefix) and f not in pass_through
                    and not any(f.startswith(o) for o in others)]
            if not hits:
                continue
            if trim:
                frames = frames[hits[0]:]
        kept[tuple(frames)] += 1
    return kept, total


def tree(counted):
    root = {"name": "all", "count": 0, "children": {}}
    for stack, count in counted.items():
        root["count"] += count
        node = root
        for frame in stack:
            node = node["children"].setdefault(frame, {"name": frame, "count": 0, "children": {}})
            node["count"] += count
    return root


def depth(node):
    return 1 + max((depth(c) for c in node["children"].values()), default=0)


def colour(name):
    package = name.split("/")[:3]
    h = abs(hash("/".join(package))) % 360
    if name.startswith("dev/idempotency"):
        return "hsl(20,90%,60%)"
    return f"hsl({h},55%,72%)"


def draw(node, x, level, scale, height, out):
    width = node["count"] * scale
    if width < MIN_WIDTH:
        return
    y = height - (level + 1) * ROW
    label = node["name"].split("/")[-1]
    title = f"{node['name']} ({node['count']} samples)"
    out.append(f'<g><title>{html.escape(title)}</title><rect x="{x:.1f}" y="{y}" width="{width:.1f}" '
               f'height="{ROW - 1}" fill="{colour(node["name"])}"/>')
    if width > 40:
        chars = int(width / 6.5)
        text = label if len(label) <= chars else label[:max(chars - 2, 0)] + ".."
        out.append(f'<text x="{x + 3:.1f}" y="{y + ROW - 4}" font-size="11" font-family="monospace">'
                   f'{html.escape(text)}</text>')
    out.append("</g>")
    child_x = x
    for child in sorted(node["children"].values(), key=lambda c: c["name"]):
        draw(child, child_x, level + 1, scale, height, out)
        child_x += child["count"] * scale


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recording")
    parser.add_argument("svg")
    parser.add_argument("--through")
    parser.add_argument("--pass-through", action="append", default=[],
                        help="a frame (Class.method, dotted) that only passes the call on: it does not count as "
                             "'through' (e.g. dev.idempotency.web.IdempotencyFilter.doFilterInternal)")
    parser.add_argument("--not", dest="others", action="append", default=[],
                        help="a package under --through whose frames do not count (e.g. the application's own "
                             "dev.idempotency.sample)")
    parser.add_argument("--trim", action="store_true",
                        help="draw each kept stack from its first --through frame up (the callers below it cut)")
    parser.add_argument("--title", default="")
    args = parser.parse_args()
    counted, total = stacks(args.recording, args.through, {f.replace(".", "/").rsplit("/", 1)[0] + "." +
                                                           f.rsplit(".", 1)[1] for f in args.pass_through}, args.trim,
                            tuple(o.replace(".", "/") for o in args.others))
    root = tree(counted)
    if root["count"] == 0:
        sys.exit("no samples kept")
    height = (depth(root) + 2) * ROW
    scale = WIDTH / root["count"]
    body = []
    draw(root, 0, 0, scale, height, body)
    kept = f"{root['count']} of {total} CPU samples" + (f" through {args.through}" if args.through else "")
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height + ROW}" '
            f'viewBox="0 0 {WIDTH} {height + ROW}"><rect width="100%" height="100%" fill="white"/>'
            f'<text x="4" y="{ROW - 3}" font-size="13" font-family="sans-serif">'
            f'{html.escape(args.title)} ({html.escape(kept)})</text>')
    with open(args.svg, "w") as f:
        f.write(head + "".join(body) + "</svg>\n")
    print(f"{args.svg}: {kept}")


if __name__ == "__main__":
    main()
