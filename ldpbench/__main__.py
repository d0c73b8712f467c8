import sys

from ldpbench.cli import main

sys.exit(main())
