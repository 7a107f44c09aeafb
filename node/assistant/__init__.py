"""An assistant's working memory: sessions, summaries, chat transcripts, the execution log."""
