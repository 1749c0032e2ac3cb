"""Help that teaches: runnable examples and the exit statuses for every sub-command.

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

# Every sub-command's examples, in the order a reader (and tests/cli/test_help_examples.py) runs them: the
# examples form one chain that starts in a directory holding the repository's problems/ folder, and each
# file an example reads is in problems/ or is written by an example of an earlier command.
EXAMPLES: dict[str, list[str]] = {
    "schema": ["mechdesign schema -o spec-schema.json"],
    "solve": [
        "mechdesign solve problems/example1_binary.yaml",
        "mechdesign solve problems/example1_binary.yaml --set epsilon=0.5 --set prior_set.c=0.01",
        "mechdesign solve problems/example1_binary.yaml -o kernel.csv   # .csv, .npy or .json by extension",
        "mechdesign solve problems/example1_binary.yaml --json -o design.json",
        "mechdesign solve problems/example1_binary.yaml --plan          # the engines that will run, without solving",
        "mechdesign solve problems/theorem1_n10.yaml --write-lp theorem1.mps   # the LP only, to solve elsewhere",
    ],
    "verify": [
        "mechdesign verify kernel.csv --prior-set min_mass:0.2 --epsilon 'log(2)'",
        "mechdesign verify design.json --spec problems/example1_binary.yaml",
    ],
    "analyze": ["mechdesign analyze kernel.csv --prior-set point:0.3,0.7 --epsilon 'log(2)' --delta 0.05"],
    "extremes": ["mechdesign extremes problems/example1_binary.yaml"],
    "epsilon": [
        "mechdesign epsilon --prior-set min_mass:0.1 --alphabet 5 --protect-min-entropy 0.5",
        "mechdesign epsilon --prior-set min_mass:0.1 --alphabet 5 --no-singling-out",
    ],
    "privatize": [
        "python problems/make_release_data.py problems/example1_binary.yaml --rows 1000 -o data.csv",
        "mechdesign privatize --kernel design.json --input data.csv --column secret --seed 7 -o released.csv",
        "mechdesign privatize --spec problems/example1_binary.yaml --input data.csv --column secret -o released2.csv",
        "mechdesign privatize --mechanism unary_encoding --epsilon 1 --alphabet problems/example1_alphabet.txt "
        "--input data.csv --column secret --seed 7 --save-mechanism oue.json -o released-oue.csv",
    ],
    "estimate": [
        "mechdesign estimate --kernel design.json --input released.csv --column secret",
        "mechdesign estimate --kernel design.json --input released.csv --column secret --method inversion --json",
        "mechdesign estimate --mechanism-file oue.json --input released-oue.csv --column secret --method mle",
    ],
    "sweep": [
        "mechdesign sweep problems/example1_binary.yaml --vary epsilon=0.25,0.5,1 --serial --out example1-sweep",
        "mechdesign sweep problems/theorem1_n10.yaml --vary epsilon=0.5:2:4 --vary prior_set.c=0,0.05 --workers 2",
    ],
    "plot": ["mechdesign plot example1-sweep   # writes utility_vs_epsilon and time_vs_size beside the results"],
    "figures": ["mechdesign figures --out paper-figures"],
    "bench": ["mechdesign bench --quick            # writes ./benchmarks/results/quick/ and prints where"],
    "completion": [
        "mechdesign completion bash > mechdesign-completion.bash",
        "# then: cp mechdesign-completion.bash ~/.local/share/bash-completion/completions/mechdesign",
    ],
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
