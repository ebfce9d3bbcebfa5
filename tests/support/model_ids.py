"""Real model ids, for the rule that refuses a moving model name (the gate's and the writer's alike)."""

# Pinned: each names one model version, by a date or a full x.y.z version.
PINNED = [
    "gpt-4o-mini-2024-07-18",
    "o3-mini-2025-01-31",
    "claude-3-5-sonnet-20241022",
    "jev-1.13.0",
    "checker-8b-2025-01",
    "model-v1.2.3",
]

# Unversioned: no moving word, but no date or version either. A family, a size or a counter, which its server can
# re-point to other weights under the same name. The checker's pin rule warns until the operator acknowledges it;
# the writer takes them.
UNVERSIONED = [
    "gpt-4o",
    "model-v2",
    "llama3:8b",
    "qwen2.5-coder:0.5b",
    "llama3.1:8b-instruct-q4_0",
    "Qwen/Qwen2.5-0.5B-Instruct",
    "SmolLM2-135M-Instruct",
    "mistral-large-2407",
]

# Moving: the server decides which model answers to them, today and tomorrow.
MOVING = [
    "gpt-4o-latest",
    "chatgpt-4o-latest",
    "mistral-large-latest",
    "claude-3-5-sonnet-latest",
    "gpt-4o-LATEST",
    "speed_latest",
    "llama3:latest",
    "qwen2.5-coder:stable",
    "jev-stable",
    "model-current",
    "gemini-1.5-pro-default",
    "default",
    "jev",
    " Jev ",
]
