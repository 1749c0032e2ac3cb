from mechdesign.cli.main import entry

entry()
