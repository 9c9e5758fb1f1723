"""Report stage: findings and analyses rendered as text, JSON, SARIF, GitHub annotations, HTML."""
