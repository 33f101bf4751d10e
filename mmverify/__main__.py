from mmverify.cli import main

main()
