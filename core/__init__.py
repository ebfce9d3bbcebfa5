"""Small helpers every app may import (lobby, quiz and verifier alike); `core` imports none of them."""
