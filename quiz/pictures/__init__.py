"""The pictures a question can carry: checked, stored under content-derived names and served (images.py), and the view
that serves them (image_views.py)."""
