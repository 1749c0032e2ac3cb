import sys

from mechdesign.cli.main import main

sys.exit(main())
