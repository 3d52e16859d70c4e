"""The shipped configs' histories, this tree against an earlier revision: the check that a refactor kept
behaviour (every history the same, time columns aside).

    python -m experiments.benchmarks.same_histories --against REV [--configs NAME ...] [--iterations 2]
                                                    [--processes 2] [--quick] [--out FILE]

Every config that REV ships (``experiments/configs/*.yaml`` there; ``--configs`` picks some) runs under both trees
with REV's file: ``psro run CONFIG --set seed=0 --set iterations=N --set time_limit=null --set
approx_gap_every=null --set progress=false``, REV from a ``git worktree`` on the same interpreter (its packages
first on the path), one torch and BLAS thread a run, ``--processes`` runs at once. The two ``history.csv`` files are
compared column by column, the time columns aside (``time_*``, ``wall_time``, ``*_time``): **same** when every
shared column holds the same values (as written: bit for bit), else the columns that differ; columns only one tree
writes are listed. ``approx_gap`` is off in both (``approx_gap_every=null``): a measurement with its own budget,
not the loop's behaviour.

``--quick`` compares ``kuhn_poker.yaml`` against ``HEAD``.
"""

from __future__ import annotations

import logging
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from experiments import harness

harness.pin_threads()

import pandas as pd  # noqa: E402

from experiments.benchmarks.kill_resume_offline import _env, _psro  # noqa: E402
from psro.loop.state import time_columns  # noqa: E402

log = logging.getLogger(__name__)

#: what every run sets on top of its config
FIELDS = {"seed": "0", "time_limit": "null", "approx_gap_every": "null", "progress": "false"}


def run(tree: Path, config: Path, out: Path, iterations: int) -> pd.DataFrame | str:
    """``config`` run by the code of ``tree``: its history, or the last line of its error."""
    sets = [arg for key, value in {**FIELDS, "iterations": str(iterations)}.items()
            for arg in ("--set", f"{key}={value}")]
    env = dict(_env(), PYTHONPATH=str(tree))
    done = subprocess.run([*_psro("run", str(config), "--out", str(out), "--overwrite"), *sets], cwd=tree, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode:
        return (done.stderr.strip().splitlines() or ["(no message)"])[-1][:200]
    return pd.read_csv(out / "history.csv")


def compare(before: pd.DataFrame, after: pd.DataFrame) -> dict:
    """The columns that differ between two histories (time columns aside), and those only one of them has."""
    times = set(time_columns([*before.columns, *after.columns]))
    shared = [c for c in before.columns if c in after.columns and c not in times]
    differ = [c for c in shared if len(before) != len(after)
              or not before[c].astype(str).reset_index(drop=True).equals(after[c].astype(str).reset_index(drop=True))]
    return {"rows": f"{len(before)}/{len(after)}", "differ": differ,
            "only_before": [c for c in before.columns if c not in after.columns and c not in times],
            "only_after": [c for c in after.columns if c not in before.columns and c not in times]}


def check(name: str, earlier: Path, folder: Path, iterations: int) -> dict:
    config = earlier / "experiments" / "configs" / name
    before = run(earlier, config, folder / f"before-{name}", iterations)
    after = run(harness.REPO_ROOT, config, folder / f"after-{name}", iterations)
    if isinstance(before, str) or isinstance(after, str):
        return {"config": name, "verdict": "error", "before": before if isinstance(before, str) else "ran",
                "after": after if isinstance(after, str) else "ran"}
    found = compare(before, after)
    verdict = "same" if not found["differ"] else "differs: " + ", ".join(found["differ"])
    log.info("%s: %s", name, verdict)
    return {"config": name, "verdict": verdict, **found}


def main(argv=None) -> None:
    parser = harness.script_parser(__doc__)
    parser.add_argument("--against", default="HEAD", help="the earlier revision (a commit, tag or branch)")
    parser.add_argument("--configs", nargs="*", help="config file names (default: every one REV ships)")
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    out = harness.output_path(parser, args, harness.REPO_ROOT / "experiments" / "benchmarks" / "results"
                              / "same_histories.md")
    if args.quick:
        args.against, args.configs = "HEAD", ["kuhn_poker.yaml"]
    with tempfile.TemporaryDirectory() as tmp:
        earlier = Path(tmp) / "earlier"
        subprocess.run(["git", "-C", str(harness.REPO_ROOT), "worktree", "add", "--detach", str(earlier),
                        args.against], check=True, capture_output=True)
        try:
            names = args.configs or sorted(p.name for p in (earlier / "experiments" / "configs").glob("*.yaml"))
            with ThreadPoolExecutor(args.processes) as pool:
                rows = list(pool.map(lambda name: check(name, earlier, Path(tmp), args.iterations), names))
        finally:
            subprocess.run(["git", "-C", str(harness.REPO_ROOT), "worktree", "remove", "--force", str(earlier)],
                           check=False, capture_output=True)
    table = pd.DataFrame(rows)
    same = int((table["verdict"] == "same").sum())
    settings = ", ".join(f"{k}={v}" for k, v in {**FIELDS, "iterations": args.iterations}.items())
    out.write_text(f"# The shipped configs' histories against {args.against}\n\nCommand: `{harness.command_line()}`"
                   f"\n\nEach config {args.against} ships, run by both trees with its file there ({settings}); time "
                   f"columns aside. **{same} of {len(table)} the same.**\n\n{harness.pipe_table(table)}\n")
    log.info("wrote %s", out)


if __name__ == "__main__":
    main()
