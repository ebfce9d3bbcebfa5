"""One question's path through the gate, a step a module: the checker asked (asking.py: the first check and the blind
question side by side), then the verdict on its answers (verdict.py), which asks the second opinion on the
borderline (second_opinion.py)."""
