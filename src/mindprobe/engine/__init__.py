"""The library under the CLI: a run's and a judge pass's whole lifecycle.

`mindprobe.evaluate()`, `mindprobe.judge()`, `mindprobe run` and `mindprobe judge` all come
here: models and resources are started and closed, capabilities checked once the model has
started, the run directory opened (or resumed) with its manifest, items executed, interrupts
recorded. Nothing here knows argparse; what is printed goes through a `Reporter`.
"""
