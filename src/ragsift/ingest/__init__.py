"""Ingestion: files to the store. The loaders read a file into documents in one normal form
(``loaders``, one module per format); the splitter cuts a document into parents (sections) and
chunks (``splitter``); the small index adds the other entries searched to find a section
(sentences, key sentences, summaries, key phrases, entities, whole sections, RAPTOR summaries:
``small_index``); the pipeline embeds them and writes them in one transaction or in checkpoints
(``pipeline``); ``sync`` mirrors a folder."""
