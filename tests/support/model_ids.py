"""Real model ids, for the rule that refuses a moving model name (the gate's and the writer's alike)."""

# Pinned: each names one model version.
PINNED = [
    "gpt-4o-mini-2024-07-18",
    "o3-mini-2025-01-31",
    "claude-3-5-sonnet-20241022",
    "jev-1.13.0",
    "qwen2.5-coder:0.5b",
    "llama3.1:8b-instruct-q4_0",
    "Qwen/Qwen2.5-0.5B-Instruct",
    "SmolLM2-135M-Instruct",
    "checker-8b-2025-01",
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
