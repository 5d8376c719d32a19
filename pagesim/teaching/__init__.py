"""Layer 7: explanations, widgets, diagrams, plots, exercises and their grading."""
