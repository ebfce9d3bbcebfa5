# The review side re-checks through the gate: the same fake checker servers as the gate's tests.
from tests.verifier.conftest import *  # noqa: F403
