"""Inputs: where a stack comes from. Today the stack file; each new input
(requirements, pylock, the installed environment) is one more module here
that produces the same `Stack`."""
