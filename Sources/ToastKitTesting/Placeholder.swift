// Replaced by the toast model (issue 3).
