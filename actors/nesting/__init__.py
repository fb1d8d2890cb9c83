"""Nested runs (DEL-4, DEL-6, docs/nesting.md): children that spawn children, and the limits on
how a tree grows.

Owns: which direct children's results an announcement carries (``findings``), depth and
breadth limits (``spawn_limits``), the global ``maxConcurrent`` lane (``lane``) and a child
session's own queue (``session_queue``). Pure core: all four; the requester and delivery shells
apply them. Reference: openclaw-delivery.md §c2, §c8, §c15.
"""
