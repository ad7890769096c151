"""The playground's model server: one model kept loaded on a Ray worker, answering chat
requests the studio hands it, token by token (docs/evaluate.md, "Playground")."""
