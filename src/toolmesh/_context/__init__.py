"""What a call knows besides its arguments (``ToolContext``), and what a tool may ask its host
during a call: elicitation, sampling, logs."""
