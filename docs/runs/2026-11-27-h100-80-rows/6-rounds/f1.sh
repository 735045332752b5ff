mkdir -p $HOME/fa4-stash && cp carry/fa4/part.00 $HOME/fa4-stash/ && ls -la $HOME/fa4-stash
