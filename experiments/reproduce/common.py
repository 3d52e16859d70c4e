"""Shared helpers of the paper reproductions: argument parsing, output folder, CSV, PNG and summary.md.

Each reproduction is run as ``python experiments/reproduce/<name>.py [--quick] [--out DIR]``
and writes its tables (CSV), figures (PNG) and a markdown ``summary.md`` that
places our numbers next to the paper's.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")   # the reproductions are headless scripts: they choose the backend at their entry point

import pandas as pd  # noqa: E402

from experiments import harness  # noqa: E402

HERE = Path(__file__).resolve().parent


def parse_args(name: str, description: str, extra=None) -> argparse.Namespace:
    """Parse ``--quick`` and ``--out``.

    Without ``--out``, a run with the default budgets writes the committed
    ``experiments/reproduce/results/<name>/``; ``--quick`` or any other
    non-default option writes a new folder under ``runs/`` instead
    (:func:`harness.output_path`), so it never replaces committed results.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="tiny budgets (well under 2 minutes)")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"output folder (default: results/{name}/ for a default run, a new folder under runs/ "
                             "otherwise)")
    if extra is not None:
        extra(parser)
    args = parser.parse_args()
    args.out = harness.output_path(parser, args, HERE / "results" / name)
    args.out.mkdir(parents=True, exist_ok=True)
    return args


class Summary:
    """Collects markdown lines and writes ``summary.md``."""

    def __init__(self, title: str, out: Path, quick: bool):
        self.out, self.start = out, time.perf_counter()
        self.lines = [f"# {title}", "", f"Mode: {'--quick' if quick else 'default budgets'}.", ""]

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def table(self, frame: pd.DataFrame, floatfmt: str = ".4g") -> None:
        """Append a markdown table (no extra dependency: formatted by hand)."""
        cols = [str(c) for c in frame.columns]
        self.lines.append("| " + " | ".join(cols) + " |")
        self.lines.append("|" + "---|" * len(cols))
        for row in frame.itertuples(index=False):
            cells = [format(v, floatfmt) if isinstance(v, float) else str(v) for v in row]
            self.lines.append("| " + " | ".join(cells) + " |")
        self.lines.append("")

    def csv(self, frame: pd.DataFrame, name: str) -> Path:
        path = self.out / name
        frame.to_csv(path, index=False)
        return path

    def figure(self, fig, name: str) -> Path:
        path = self.out / name
        fig.savefig(path, dpi=110, bbox_inches="tight")
        import matplotlib.pyplot as plt

        plt.close(fig)
        self.lines.append(f"![{name}]({name})")
        self.lines.append("")
        return path

    def write(self) -> Path:
        self.lines.append(f"Runtime: {time.perf_counter() - self.start:.1f} s.")
        path = self.out / "summary.md"
        path.write_text("\n".join(self.lines) + "\n")
        return path
