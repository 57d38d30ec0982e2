"""``python -m bench retrieval|scale|trust|gaps|tune|load|docs|chaos ...`` — JSON on stdout (``load`` without
--json: a table)."""
from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    sub = parser.add_subparsers(dest="command", required=True)
    __import__("bench.docs").docs.register(sub, argv)  # `docs` parses, runs and exits in bench/docs.py
    __import__("bench.chaos").chaos.register(sub, argv)  # so does `chaos`, in bench/chaos.py
    p = sub.add_parser("retrieval", help="hybrid retrieval vs bm25s / dense / RRF baselines")
    p.add_argument("--dataset", action="append",
                   help="xquad-es, xquad-en, mlqa-es, faquad-pt, xquad-en-es (default: all)")
    p.add_argument("--split", choices=["dev", "test"], default="dev")
    p.add_argument("--json", action="store_true", help="(output is always JSON)")
    p = sub.add_parser("scale", help="index build time and hybrid query latency at synthetic scale")
    p.add_argument("--chunks", type=int, default=100_000, help="largest size (10k is always measured too)")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--skip-embedder", action="store_true", help="skip the real embedder throughput part")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("trust", help="answer vs abstain: in/out of KB, CLINC150 out-of-scope, the gate")
    p.add_argument("--split", choices=["dev", "test"], default="dev")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("gaps", help="gap merging (BANKING77, PAWS-X es, XQuAD es<->en) and PII masking")
    p.add_argument("--split", choices=["dev", "test"], default="dev")
    p.add_argument("--skip-banking", action="store_true", help="skip the slowest part (BANKING77)")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("tune", help="grid of retrieval thresholds on the dev split")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("load", help="concurrent visitors on the real endpoint: errors, server overhead, RSS")
    p.add_argument("--users", type=int, default=50)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--warmup-rounds", type=int, default=2, help="questions per user before measuring (not counted)")
    p.add_argument("--ms-per-token", type=float, default=20.0, help="the paced provider's speed")
    p.add_argument("--keep-data", action="store_true",
                   help="serve the cached demo data dir itself, not a throw-away copy (its conversations pile up)")
    p.add_argument("--stages", action="store_true", help="also time each stage of a turn inside the server")
    p.add_argument("--unique", action="store_true",
                   help="make every question unique (no cached query vector: the embedder runs on every turn)")
    p.add_argument("--json", action="store_true", help="JSON instead of a table")
    args = parser.parse_args(argv)
    if args.command == "retrieval":
        from bench.retrieval import run

        report = run(args.dataset, args.split)
    elif args.command == "scale":
        from bench.scale import run as run_scale

        report = run_scale(args.chunks, args.queries, not args.skip_embedder)
    elif args.command == "trust":
        from bench.trust import run as run_trust

        report = run_trust(args.split)
    elif args.command == "gaps":
        from bench.gaps import run as run_gaps

        report = run_gaps(args.split, args.skip_banking)
    elif args.command == "load":
        from bench.load import run as run_load, table

        report = run_load(args.users, args.seconds, args.warmup_rounds, args.ms_per_token, scratch=not args.keep_data,
                          stages=args.stages, unique=args.unique)
        if not args.json:
            print(table(report))
            return 0 if report["pass"] else 1
    else:
        from bench.tuning import run as run_tune

        report = run_tune()
    json.dump(report, sys.stdout, ensure_ascii=False, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
