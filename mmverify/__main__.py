from mmverify.launch import main

main()
