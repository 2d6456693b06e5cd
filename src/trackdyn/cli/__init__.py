"""The ``trackdyn`` command line (Typer)."""
