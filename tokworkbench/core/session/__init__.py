"""The session layer the app and the CLI drive: Session, Settings, Snapshot, the training child."""
