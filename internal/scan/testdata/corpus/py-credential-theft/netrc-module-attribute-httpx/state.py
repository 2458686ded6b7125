cache = None
