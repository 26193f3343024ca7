import sys

from iclab.cli import main

sys.exit(main())
