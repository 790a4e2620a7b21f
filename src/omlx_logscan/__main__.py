"""Allow ``python -m omlx_logscan``."""

from omlx_logscan.cli import main

if __name__ == "__main__":
    main()
