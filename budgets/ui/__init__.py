"""The budget pages: views, their charts and the edit form. They read through
``budgets.selectors`` and write through ``budgets.services``; templates are in ``templates/budgets/``."""
