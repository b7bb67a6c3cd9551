// heat map script: to come
