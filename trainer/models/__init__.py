"""Models: loading policies, tokenizers and the critic; building the offline demo model."""
