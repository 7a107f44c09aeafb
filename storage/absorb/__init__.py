"""What absorbing needs from storage: a fact's neighbours and slots, and the conflicts they
raise."""
