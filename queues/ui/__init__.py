"""The web UI of the fair-share domain: the pages (``views``), their charts, forms and number
formats (``display``), and links to other apps' pages (``links``). Pages read through
``queues.selectors`` and write through ``queues.services``; templates are in ``templates/queues/``
and template tags in ``queues/templatetags/`` (where Django finds them)."""
