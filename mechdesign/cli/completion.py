"""``mechdesign completion SHELL``: print a shell completion script, made by shtab
from the same argparse parser the command uses, so it always matches the options.

    mechdesign completion bash > ~/.local/share/bash-completion/completions/mechdesign
    mechdesign completion zsh  > ~/.zfunc/_mechdesign        # with fpath+=(~/.zfunc) before compinit

shtab is the ``completion`` extra (``pip install 'mechdesign[completion]'``).
"""

from __future__ import annotations

import sys

from mechdesign.spec.errors import InputError

__all__ = ["register"]

SHELLS = ["bash", "zsh", "tcsh"]


def _cmd_completion(args) -> int:
    try:
        import shtab
    except ImportError:
        raise InputError("completion: needs shtab: pip install 'mechdesign[completion]'") from None
    from mechdesign.cli.main import build_parser

    sys.stdout.write(shtab.complete(build_parser(), shell=args.shell))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("completion", help="print a shell completion script (bash, zsh, tcsh)")
    p.add_argument("shell", choices=SHELLS, help="the shell to complete for")
    p.set_defaults(func=_cmd_completion)
