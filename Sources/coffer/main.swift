import Coffer
print(CofferVersion.sqlite)
