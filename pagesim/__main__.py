import sys

try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C while the command starts (the package's own imports: see __init__)
    print("pagesim: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
