"""One module per ``maxminq`` sub-command, each with ``add_arguments`` and ``run``."""
