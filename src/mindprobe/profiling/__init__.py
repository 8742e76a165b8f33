"""`mindprobe profile`: one model's whole cognitive profile as one unit.

Every registered benchmark that declares `profile_settings(size)` is planned in its paper's
default setting (plan.py), the plan is shown before any completion is requested (its tokens
counted with the model's tokenizer where it has one, tokens.py), the runs go into one profile
folder with its own manifest and run at once against the model under one concurrency budget
through the engine's run lifecycle (run.py), and two profiles compare benchmark by benchmark
with paired intervals (compare.py). Nothing here knows a benchmark by name.
"""
