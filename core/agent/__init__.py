"""The support agent: providers, tools, the tool loop with its citation gate, prompts."""
