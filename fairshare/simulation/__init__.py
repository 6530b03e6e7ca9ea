"""Simulation: scenario files and ``--set`` edits (``scenario``), discrete-event runs of the
engine (``simulator``), monthly renewal on a wall clock (``calendar``) and the command line
``simulate FILE`` (``cli``)."""
