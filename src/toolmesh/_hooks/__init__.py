"""The hook protocol, its typed actions, and stacks that chain hooks in order."""
