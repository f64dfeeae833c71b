"""The contracts every kind shares: the Learner and Model protocols, the capabilities, the Kind record, roles."""
