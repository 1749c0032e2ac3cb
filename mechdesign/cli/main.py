"""Command line: ``mechdesign solve SPEC [--json] [-o FILE]``, ``mechdesign schema``, …

This is the one place that turns exceptions into messages and exit statuses:

    0    optimal and certified
    1    no certified optimum (infeasible, time limit, solver failure, suboptimal); verify: not private
    2    bad input: one line on stderr naming the field and the rule (``--debug`` shows the traceback)
    3    internal error (an exception we did not raise on purpose: a bug)
    130  interrupted (Ctrl-C / SIGINT), as shells report 128 + SIGINT

Sub-commands live in their own modules; each exposes ``register(subparsers)``
which adds its parser and sets ``func`` to a handler returning the exit status.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from mechdesign.spec.errors import InputError, MechdesignError

EXIT_OK, EXIT_NOT_CERTIFIED, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _write_with(write, out: str | None) -> None:
    """``write(stream)`` to the file ``out`` (an unwritable file: one-line InputError), or to stdout."""
    if out:
        try:
            with open(out, "w", encoding="utf-8") as stream:
                write(stream)
        except OSError as exc:
            raise InputError(f"-o: cannot write {out}: {exc.strerror or exc}") from None
    else:
        write(sys.stdout)


def _write(text: str, out: str | None) -> None:
    _write_with(lambda stream: stream.write(text), out)


def _cmd_solve(args) -> int:
    from mechdesign.design import DesignInterrupted, design
    from mechdesign.cli.report import render_result
    from mechdesign.cli.overrides import load_with_overrides

    if args.plan:
        return _print_plan(args)
    if args.write_lp:
        from mechdesign.objectives.registry import compile_problem
        from mechdesign.lp.solve import write_lp
        from mechdesign.engines.routing import plan

        from mechdesign.theory.epsilon_requirement import resolve_spec

        spec = resolve_spec(load_with_overrides(args.spec, args.set or []))[0]
        compiled = compile_problem(spec)
        write_lp(compiled.lps[0], args.write_lp)
        first = plan(spec).names[0]
        print(
            f"wrote {args.write_lp}: {compiled.lps[0].num_rows} rows, {compiled.lps[0].num_cols} columns"
            + (f" (the first of {len(compiled.lps)} LPs)" if len(compiled.lps) > 1 else "")
            + (
                ""
                if first == "compiled-lp"
                else f"; the design runs engine {first} first, which solves it without this LP whole (--plan)"
            ),
            file=sys.stderr,
        )
        return EXIT_OK
    from mechdesign.cli.args import parse_report_count
    from mechdesign.cli.report import design_accuracy, design_mle_accuracy
    from mechdesign.cli.status import live_status, size_warning

    n_reports = parse_report_count(args.n)
    spec = load_with_overrides(args.spec, args.set or [])
    warning = size_warning(spec)
    if warning and not args.quiet:
        print(warning, file=sys.stderr)
    interrupted = None
    with live_status(quiet=args.quiet):
        try:
            result = design(spec)
        except DesignInterrupted as exc:  # Ctrl-C: one line, then the best certified kernel so far, exit 130
            interrupted, result = exc, exc.result
    if interrupted is not None:
        print(f"mechdesign: {interrupted}", file=sys.stderr, flush=True)
        if result.kernel is None:
            return EXIT_INTERRUPTED
    accuracy = design_accuracy(result, n_reports)
    mle_accuracy = design_mle_accuracy(result, n_reports)
    suffix = Path(args.output).suffix.lower() if args.output else ""
    if args.output and args.output.lower().endswith(".mechanism.json"):
        # -o FILE.mechanism.json: the structured mechanism's own file (privatize/estimate --mechanism-file)
        if result.mechanism is None:
            raise InputError(
                f"-o {args.output}: no structured mechanism to write (the design is an explicit kernel; "
                "use -o FILE.csv, .npy or .json)"
            )
        result.mechanism.save(args.output)
        print(
            f"wrote the {result.mechanism.family} mechanism to {args.output} (status {result.status.value})",
            file=sys.stderr,
        )
    elif suffix in (".csv", ".npy"):  # -o by extension: the kernel itself (CSV: exact p/q; .npy: the doubles)
        if result.exact_kernel is None:
            raise InputError(f"-o {args.output}: no kernel to write (status {result.status.value})")
        from mechdesign.release.kernel_io import write_kernel

        write_kernel(result.exact_kernel, args.output)
        print(
            f"wrote the {result.exact_kernel.shape[0]} x {result.exact_kernel.shape[1]} kernel to {args.output} "
            f"(status {result.status.value})",
            file=sys.stderr,
        )
    elif args.json or suffix == ".json":
        from mechdesign.release.kernel_text import write_result_json

        # the kernel rows a block at a time: the same text as dumps_indented({**result.to_json(), ...})
        _write_with(
            lambda out: write_result_json(result, {"mle_accuracy": mle_accuracy, "inversion_accuracy": accuracy}, out),
            args.output,
        )
    else:
        _write(render_result(result, accuracy=accuracy, mle_accuracy=mle_accuracy), args.output)
    if interrupted is not None:
        return EXIT_INTERRUPTED
    return EXIT_OK if result.is_ok else EXIT_NOT_CERTIFIED


def _print_plan(args) -> int:
    """``solve SPEC --plan``: the route of the spec (engines that apply, in order, and why the others do not),
    without solving."""
    from mechdesign.cli.overrides import load_with_overrides
    from mechdesign.engines.routing import plan
    from mechdesign.theory.epsilon_requirement import resolve_spec

    route = plan(resolve_spec(load_with_overrides(args.spec, args.set or []))[0])
    _write(json.dumps(route.to_json(), indent=2) + "\n" if args.json else route.text() + "\n", args.output)
    return EXIT_OK


def _cmd_schema(args) -> int:
    from mechdesign.spec.models import Spec

    _write(json.dumps(Spec.model_json_schema(), indent=2) + "\n", args.output)
    return EXIT_OK


def _register_core(sub) -> None:
    p = sub.add_parser("solve", help="design an optimal mechanism from a YAML spec and certify it")
    p.add_argument("spec", help="path to a YAML spec (see problems/)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE, by extension: .csv (exact p/q kernel), .npy (kernel as doubles), "
        ".json (the --json object), anything else the text report",
    )
    p.add_argument("--write-lp", metavar="FILE", help="write the compiled LP (.lp or .mps) and stop, without solving")
    p.add_argument(
        "--plan",
        action="store_true",
        help="print the route (the engines that will be tried, in order, and why the others do not apply) and stop",
    )
    p.add_argument(
        "--n",
        default="10000",
        help="reports n for the accuracy lines (the MLE's asymptotic error and the inversion estimator's exact one; default 10000)",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no live status and no size warning (the status shows only on a terminal anyway)",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY.PATH=VALUE",
        help="override a value of the spec, e.g. --set epsilon=0.5 --set prior_set.c=0.01 (repeatable)",
    )
    p.set_defaults(func=_cmd_solve)
    p = sub.add_parser("schema", help="print the JSON schema of a spec")
    p.add_argument("-o", "--output", metavar="FILE", help="write the schema to FILE")
    p.set_defaults(func=_cmd_schema)


# Modules that add sub-commands (each has register(subparsers)).
COMMAND_MODULES: list[str] = [
    "mechdesign.cli.verify",
    "mechdesign.release.privatize",
    "mechdesign.cli.analyze",
    "mechdesign.bench.tables",
    "mechdesign.cli.extremes",
    "mechdesign.cli.epsilon",
    "mechdesign.bench.paper_figures",
    "mechdesign.cli.estimate",
    "mechdesign.cli.completion",
    "mechdesign.cli.sweep",
]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors are bad input: exit 2, one line
        raise InputError(f"usage: {message} (see 'mechdesign --help')")


def build_parser() -> argparse.ArgumentParser:
    from importlib import import_module

    from mechdesign.cli.help_text import add_epilogs, exit_status_text

    parser = _Parser(
        prog="mechdesign",
        description="Design certified (eps,P)-PML privacy mechanisms by LP.",
        epilog="example:\n  mechdesign solve problems/example1_binary.yaml\n\n" + exit_status_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    from mechdesign import __version__

    parser.add_argument("--version", action="version", version=f"mechdesign {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    _register_core(sub)
    for name in COMMAND_MODULES:
        import_module(name).register(sub)
    add_epilogs(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    debug = "--debug" in argv
    try:
        args = build_parser().parse_args(argv)
        status = args.func(args)
    except MechdesignError as exc:
        if debug:
            raise
        print(f"mechdesign: error: {exc}", file=sys.stderr)
        status = exc.exit_status
    except KeyboardInterrupt:
        print("mechdesign: interrupted", file=sys.stderr)
        status = EXIT_INTERRUPTED
    except BrokenPipeError:
        status = EXIT_OK
    except Exception as exc:  # a bug of ours: still no traceback unless asked
        if debug:
            raise
        print(
            f"mechdesign: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
            file=sys.stderr,
        )
        status = EXIT_INTERNAL
    return status


def entry() -> None:
    """The console entry point (and ``python -m mechdesign``): exit with :func:`main`'s status. After Ctrl-C the
    process ends without the interpreter's teardown: a HiGHS solve thread that is still stopping can make that
    teardown abort (exit −6 instead of 130 after an interrupted sweep). Everything the command
    writes is written and flushed before :func:`main` returns."""
    status = main()
    if status == EXIT_INTERRUPTED:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


if __name__ == "__main__":  # pragma: no cover
    entry()
