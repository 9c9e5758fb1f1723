"""Report stage: diagnostics and analyses rendered as text, JSON, SARIF, GitHub annotations, HTML."""
