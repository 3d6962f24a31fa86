"""The induce command-line application (Typer)."""
