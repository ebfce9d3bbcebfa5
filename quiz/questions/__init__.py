"""A host's questions across every round and the sample packs: the bank (bank.py: search, filters, a round made from
picked questions) and its word index (search_index.py: PostgreSQL's text search on a GIN index, SQLite's FTS5 table
kept in step by triggers)."""
