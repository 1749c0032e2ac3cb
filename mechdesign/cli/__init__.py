"""Command line: ``main`` turns exceptions into messages and exit statuses; one module per command."""

from mechdesign.cli.main import EXIT_BAD_INPUT, EXIT_NOT_CERTIFIED, EXIT_OK, build_parser, main

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_NOT_CERTIFIED", "EXIT_BAD_INPUT"]
