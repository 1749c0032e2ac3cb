"""Help that teaches: an example and the exit statuses for every sub-command.

:func:`add_epilogs` is called once by :func:`mechdesign.cli.main.build_parser` after every command
module has registered its parser; it appends the example and the exit-status table to each
sub-command's ``--help`` (raw formatting, so the lines stay as written here).
"""

from __future__ import annotations

import argparse

__all__ = ["EXIT_STATUSES", "EXAMPLES", "add_epilogs", "exit_status_text"]

EXIT_STATUSES: dict[int, str] = {
    0: "ok: optimal and certified (solve), private (verify), done (other commands)",
    1: "no certified optimum (suboptimal, time limit, solver failure) or NOT PRIVATE (verify)",
    2: "bad input: one line naming the field, the rule and the value found",
    3: "internal error (a bug: please report it; --debug shows the traceback)",
    130: "interrupted (Ctrl-C); solve reports the best certified kernel found so far, if any",
}

EXAMPLES: dict[str, list[str]] = {
    "solve": [
        "mechdesign solve problems/example1_binary.yaml",
        "mechdesign solve problems/example1_binary.yaml --set epsilon=0.5 --set prior_set.c=0.01",
        "mechdesign solve problems/example1_binary.yaml -o kernel.csv   # .csv, .npy or .json by extension",
        "mechdesign solve problems/example1_binary.yaml --plan          # the engines that will run, without solving",
    ],
    "schema": ["mechdesign schema -o spec-schema.json"],
    "verify": [
        "mechdesign verify kernel.csv --prior-set min_mass:0.05 --epsilon 'log(3)'",
        "mechdesign verify result.json --spec problems/example1_binary.yaml",
    ],
    "privatize": [
        "mechdesign privatize --spec problems/example1_binary.yaml --input data.csv --column answer -o out.csv"
    ],
    "analyze": ["mechdesign analyze kernel.csv --prior-set point:0.2,0.3,0.5 --epsilon 0.2 --delta 0.05"],
    "bench": ["mechdesign bench --quick            # writes ./benchmarks/results/quick/ and prints where"],
    "extremes": ["mechdesign extremes problems/example1_binary.yaml"],
    "completion": ["mechdesign completion bash > ~/.local/share/bash-completion/completions/mechdesign"],
}


def exit_status_text() -> str:
    return "exit statuses:\n" + "\n".join(f"  {code:<4} {text}" for code, text in EXIT_STATUSES.items())


def add_epilogs(subparsers_action) -> None:
    for name, parser in subparsers_action.choices.items():
        parts = []
        if name in EXAMPLES:
            parts.append("examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name]))
        parts.append(exit_status_text())
        parser.epilog = "\n\n".join(([parser.epilog] if parser.epilog else []) + parts)
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
